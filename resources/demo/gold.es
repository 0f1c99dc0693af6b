Compré una mesa nueva para la cocina .
Es muy bonita .
Mi marido quería una blanca , pero al final le gustó esta .
La trajeron el lunes por la mañana .
La subieron por la escalera porque el ascensor no funcionaba .
La vieja mesa se la regalamos a mi cuñado .
Él la necesitaba para su taller .
También compramos una lámpara de la marca Lumadora , que da una luz cálida y agradable .
Dijo que vendría el lunes .
Él tiene ocho años y ella tiene cinco .
Mi hermana no come carne , así que compraré verduras y pescado .
La radio dice que la carretera de Puerto Albarán está cerrada .
Ponte el abrigo y la bufanda .
El río creció tanto que inundó los campos de los vecinos .
Me duele la garganta desde hace tres días .
La tiene un poco inflamada .
Me las recetó mi médico de cabecera el año pasado .
Tómelo tres veces al día después de las comidas .
El arroz con bogavante es la especialidad de la casa .
Una botella de agua sin gas y un vino blanco de la casa .
Dejamos una buena propina porque el servicio fue excelente .
De acuerdo , se lo diré en cuanto vuelva .
Creo que lo dejó en mi mochila el jueves .
Nos saludó en la puerta y le dio la mano .
Se la compré el mes pasado en las rebajas .
Le escribo en nombre de Calduxa , una pequeña empresa de cerámica de Torremolar .
Lamentablemente , el esmalte azul que eligió no estará disponible hasta finales de mes .
Picad la cebolla y mezcladla con las patatas en un cuenco grande .
Freídlas a fuego lento durante unos veinte minutos .
Estaba casi vacío , así que me senté junto a la ventanilla .
Sí , aquí está : una habitación doble para tres noches .
La habitación era amplia y tenía un balcón con vistas al puerto .
La primera era demasiado estrecha y la segunda tenía las mangas muy largas .
La dependienta la dobló con cuidado y la metió en una bolsa de papel .
Me recibió la jefa de personal , una mujer muy seria .
No fue fácil , pero lo terminé a tiempo .
No las encuentro por ninguna parte .
Tiene paredes de piedra muy gruesas y un patio con una higuera .
La vende en el mercado los domingos .
Son de Huelva y están muy dulces .
Hacía años que no la veía .
El mecánico lo revisó y dijo que las pastillas de freno están gastadas .
El suyo se rompió en las vacaciones .
Tiene tres dormitorios , dos baños y una terraza enorme .
Lo vimos en marzo y nos enamoramos de él .
El sofá no cabe por la puerta del piso nuevo .
Tiene la espalda muy roja .
Quería sacar este libro , pero me dice la máquina que tengo una multa .
Necesito su pasaporte , su número de identidad de extranjero y un contrato de trabajo .
Las lechugas , en cambio , se las comieron los caracoles .
Se llama Trufa y tiene unos tres años .
A mi mujer le quitaron un bote de champú porque era demasiado grande .
Él trabaja como ingeniero en una empresa de energía solar .
Después presentó el nuevo producto , un termo llamado Zentrovia .
Estaba muy preocupada porque el otro equipo no había perdido ningún partido .
En la segunda parte , mi hija paró dos tiros increíbles .
