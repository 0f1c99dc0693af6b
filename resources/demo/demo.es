El sábado fuimos a una tienda de muebles en las afueras.
Compré una mesa nueva para la cocina.
Es muy bonita.
Es de madera de roble y tiene cuatro sillas a juego.
Mi marido quería una blanca, pero al final le gustó esta.
La trajeron el lunes por la mañana.
Los dos repartidores eran muy amables.
La subieron por la escalera porque el ascensor no funcionaba.
¿Dónde quieres que la pongamos?
Junto a la ventana, por favor.
Ahora desayunamos allí todos los días y vemos el jardín.
La vieja mesa se la regalamos a mi cuñado.
Él la necesitaba para su taller.
Dice que es perfecta para arreglar bicicletas.
También compramos una lámpara de la marca Lumadora, que da una luz cálida y agradable.
Todavía no la hemos colgado.
Mi hermana llamó ayer.
Dijo que vendría el lunes.
Vive en Villaseca del Río, un pueblo pequeño cerca de la sierra.
Hace dos años que no nos vemos.
Viene con sus dos hijos, Mateo y Lucía.
Él tiene ocho años y ella tiene cinco.
Les encanta jugar en el parque.
Tengo que preparar la habitación de invitados antes del domingo.
Está llena de cajas.
Las voy a llevar al trastero esta tarde.
Mi hermana no come carne, así que compraré verduras y pescado.
Su marido no puede venir porque trabaja toda la semana.
Es enfermero en el hospital comarcal.
Quizás venga en agosto, cuando tenga vacaciones.
Los niños quieren ver el mar, así que el martes iremos a la playa si hace buen tiempo.
Nunca lo han visto.
Les he prometido que construiremos un castillo de arena enorme y que, si se portan bien, después comeremos un helado en el paseo marítimo.
¡Qué frío hace esta mañana!
Anoche nevó en la sierra.
La radio dice que la carretera de Puerto Albarán está cerrada.
Las quitanieves están trabajando desde las cinco.
¿Vas a ir a la oficina en coche?
No, cogeré el autobús.
Es más seguro con este tiempo.
Ponte el abrigo y la bufanda.
Los dejé encima de la silla del pasillo.
Según el pronóstico, mañana subirán las temperaturas y saldrá el sol por la tarde.
Espero que tengan razón.
El fin de semana pasado llovió sin parar.
El río creció tanto que inundó los campos de los vecinos.
Por suerte, no llegó a las casas.
En primavera el tiempo aquí es muy cambiante: por la mañana hace sol, a mediodía sopla un viento fuerte y por la noche a veces cae granizo.
Buenos días, doctora.
Buenos días. ¿Qué le pasa?
Me duele la garganta desde hace tres días.
¿Tiene fiebre?
Anoche tenía treinta y ocho de fiebre.
Abra la boca, por favor.
La tiene un poco inflamada.
¿Toma algún medicamento?
Solo unas pastillas para la tensión.
Me las recetó mi médico de cabecera el año pasado.
Muy bien. Le voy a recetar un jarabe.
Tómelo tres veces al día después de las comidas.
Si no mejora en una semana, vuelva a la consulta.
¿Puedo ir a trabajar?
Mejor quédese en casa dos o tres días, beba mucha agua y descanse todo lo que pueda.
Le haré un justificante para la empresa.
Muchas gracias, doctora.
De nada. Que se mejore.
¿Tienen una mesa para cuatro personas?
Sí, síganme, por favor.
Aquí tienen la carta.
¿Qué nos recomienda?
El arroz con bogavante es la especialidad de la casa.
Lo preparamos solo para dos personas como mínimo.
Entonces lo pedimos para dos, y para los niños, dos platos de macarrones.
¿Y para beber?
Una botella de agua sin gas y un vino blanco de la casa.
El camarero trajo el pan y unas aceitunas.
Estaban riquísimas.
El arroz tardó casi media hora, pero valió la pena.
Mi suegro dijo que era el mejor que había probado nunca.
De postre pedimos flan y una tarta de almendras.
¿Nos trae la cuenta, por favor?
¿Se puede pagar con tarjeta?
Por supuesto.
Dejamos una buena propina porque el servicio fue excelente.
Al salir, el dueño nos regaló una botella de licor de hierbas que hace su familia en un pueblo de la montaña y nos pidió que volviéramos pronto.
¿Diga?
Hola, ¿está Carmen?
No, ha salido hace un momento.
¿Quiere dejarle un recado?
Sí, soy Andrés, un compañero de la academia de idiomas.
Dígale que la clase de mañana se ha cambiado a las siete.
La profesora está enferma y no puede venir antes.
De acuerdo, se lo diré en cuanto vuelva.
¿Tiene ella mi número?
Creo que sí, pero démelo por si acaso.
Apúntelo: seis, cuatro, cinco, dos, uno, ocho, nueve, tres, siete.
Perfecto, ya lo tengo.
Otra cosa: si quiere, puede traer el libro de ejercicios, porque vamos a corregir la tarea.
Creo que lo dejó en mi mochila el jueves.
Entonces se lo llevaré yo.
Muchas gracias por llamar.
Adiós, buenas tardes.
Hoy ha sido el primer día de colegio de mi hijo pequeño.
Estaba muy nervioso por la mañana.
No quiso desayunar.
Su maestra se llama Elena y parece muy simpática.
Nos saludó en la puerta y le dio la mano.
En su clase hay veintidós niños.
Conoce a tres de ellos de la guardería.
A las cuatro fui a buscarlo.
Salió corriendo con una mochila llena de dibujos.
Me dijo que había aprendido una canción sobre los colores.
La cantó todo el camino a casa.
Mañana tienen educación física, así que necesita ropa de deporte.
Se la compré el mes pasado en las rebajas.
La directora nos envió un correo con el horario y la lista de materiales.
Tenemos que forrar todos los libros antes del viernes.
Lo haremos el jueves por la noche, cuando su padre vuelva del trabajo.
Estoy segura de que este año le va a ir muy bien.
Estimada señora Ortega:
Le escribo en nombre de Calduxa, una pequeña empresa de cerámica de Torremolar.
Hemos recibido su pedido de ciento cincuenta tazas y treinta jarras.
Muchas gracias por su confianza.
Lamentablemente, el esmalte azul que eligió no estará disponible hasta finales de mes.
Nuestro proveedor ha tenido un problema con la fábrica.
Le ofrecemos dos opciones.
Podemos enviarle ahora las jarras y las tazas más adelante.
También podemos esperar y mandarlo todo junto el día treinta.
En ese caso, le haríamos un descuento del diez por ciento por las molestias.
Le adjunto el presupuesto actualizado y las fotos de las muestras.
Las hicimos ayer en el taller con luz natural.
Le agradecería que me respondiera antes del viernes para organizar la producción de la semana que viene, porque tenemos muchos encargos y el horno solo funciona tres días por semana.
Quedo a su disposición para cualquier consulta.
Un cordial saludo,
Julián Ferrero, director comercial
Hoy os explico cómo hacer una tortilla de patatas.
Necesitáis seis huevos, cuatro patatas medianas, una cebolla, aceite de oliva y sal.
Primero pelad las patatas.
Después cortadlas en rodajas finas.
Picad la cebolla y mezcladla con las patatas en un cuenco grande.
Calentad bastante aceite en una sartén honda.
Cuando esté caliente, echad las patatas y la cebolla.
Freídlas a fuego lento durante unos veinte minutos.
No deben quedar crujientes, sino blandas.
Mientras tanto, batid los huevos con una pizca de sal.
Escurrid bien el aceite y añadid las patatas a los huevos.
Dejad reposar la mezcla cinco minutos.
Ponedla en la sartén con un poco de aceite y cuajadla por un lado.
Luego dadle la vuelta con ayuda de un plato.
Es el momento más difícil, así que hacedlo con decisión y sin miedo.
Dejadla un par de minutos más y ya está lista.
Se puede comer caliente o fría.
En mi casa la preferimos con un poco de pimiento verde y una ensalada de tomate al lado.
Disculpe, ¿a qué hora sale el próximo tren para Valdemora?
Sale a las diez y cuarto del andén tres.
¿Cuánto cuesta un billete de ida y vuelta?
Veintiocho euros, pero con la tarjeta joven le sale más barato.
No la tengo.
Entonces son veintiocho.
El tren llegó con diez minutos de retraso.
Estaba casi vacío, así que me senté junto a la ventanilla.
El paisaje era precioso: olivares, colinas, cigüeñas en los campanarios y algún castillo en ruinas.
Una señora mayor se sentó delante de mí.
Iba a visitar a su nieta, que acababa de tener un bebé.
Me enseñó varias fotos en el móvil.
En Valdemora hacía un calor horrible.
Busqué la oficina de turismo, pero estaba cerrada.
Abre solo por las mañanas.
Un chico en una gasolinera me dio un plano del pueblo y me recomendó un bar donde sirven unas croquetas caseras buenísimas.
Las probé y tenía razón.
Por la tarde volví a la estación, pero el último tren ya había salido, así que tuve que dormir en una pensión pequeña que había junto a la iglesia.
Buenas noches, tengo una reserva a nombre de Sofía Marín.
Un momento, por favor.
Sí, aquí está: una habitación doble para tres noches.
¿Me deja su documento de identidad?
Aquí tiene.
Gracias. Su habitación es la cuatrocientos doce, en la cuarta planta.
El desayuno se sirve de siete a diez en el comedor.
¿Hay wifi en las habitaciones?
Sí, la contraseña está en la tarjeta de la llave.
La habitación era amplia y tenía un balcón con vistas al puerto.
Sin embargo, el aire acondicionado hacía mucho ruido.
Llamé a recepción y enseguida subió un técnico.
Lo arregló en cinco minutos.
A la mañana siguiente, me cambiaron las toallas y me dejaron una botella de agua de regalo.
El último día pedí un taxi al aeropuerto.
Llegó puntual.
Busco unos pantalones vaqueros para mi hijo.
¿Qué talla usa?
Creo que la doce, pero ha crecido mucho este verano.
Tenemos estos en azul oscuro y en negro.
Me llevo los azules.
Si no le quedan bien, puede cambiarlos en un plazo de treinta días con el tique.
También necesito una camisa blanca para una boda.
Es para mí.
Las camisas de hombre están en la segunda planta, al lado de los trajes.
Me probé tres.
La primera era demasiado estrecha y la segunda tenía las mangas muy largas.
La tercera me quedaba perfecta.
Costaba cuarenta euros, pero estaba rebajada a treinta y dos.
La dependienta la dobló con cuidado y la metió en una bolsa de papel.
Al llegar a casa me di cuenta de que tenía una mancha en el cuello.
Mañana la devolveré.
Ayer tuve una entrevista de trabajo en una agencia de viajes del centro.
Me recibió la jefa de personal, una mujer muy seria.
Me preguntó por mi experiencia y por los idiomas que hablo.
Le dije que hablo inglés y francés, y que estoy aprendiendo alemán.
Después me hizo una prueba práctica con el ordenador.
Tenía que organizar un viaje de cinco días a Lisboa para una familia de cuatro personas con un presupuesto de dos mil euros.
No fue fácil, pero lo terminé a tiempo.
Al final me preguntó si podía empezar el mes que viene.
Le contesté que sí.
Me llamarán el viernes con una respuesta definitiva.
Mi madre está más nerviosa que yo.
Me llama cada dos horas para preguntar si sé algo.
El viernes por la tarde sonó el teléfono.
Era la jefa de personal.
Me ofrecieron el puesto.
Empiezo el día tres.
Para celebrarlo, invité a mis padres a cenar en un restaurante italiano que acaban de abrir en nuestra calle.
¿Has visto mis llaves?
No las encuentro por ninguna parte.
¿Miraste en el bolsillo del abrigo?
Sí, y en el bolso, y en la mesa de la entrada.
Ayer las tenías cuando volviste del supermercado.
Es verdad, abrí la puerta con ellas.
Luego guardé la compra en la nevera.
¿No las habrás metido en la nevera también?
¡Aquí están, al lado de los yogures!
Estás muy despistada últimamente.
Lo sé, duermo poco por culpa del trabajo.
Deberías pedir unos días libres.
Lo haré la semana que viene.
Por si acaso, voy a hacer una copia de las llaves y se la voy a dar a la vecina del tercero.
Es una buena idea.
Mis abuelos viven en una casa antigua en Fuentealba, un pueblo de doscientos habitantes.
La construyó mi bisabuelo hace casi cien años.
Tiene paredes de piedra muy gruesas y un patio con una higuera.
En verano da una sombra fresca y en septiembre da unos higos dulcísimos.
Mi abuelo tiene ochenta y cuatro años.
Todavía sale a caminar cada mañana con su bastón.
Mi abuela cose y hace mermelada de ciruela.
La vende en el mercado los domingos.
Cuando era pequeño, pasaba allí todos los veranos.
Mi abuelo me enseñó a pescar en el arroyo.
Nunca pescábamos nada, pero nos lo pasábamos muy bien.
Por la noche mi abuela nos contaba historias de su juventud.
Las recuerdo todas.
El mes que viene cumplen sesenta años de casados.
Toda la familia va a reunirse en el pueblo para darles una sorpresa.
Ellos todavía no saben nada.
Mi prima ha hecho un álbum con fotos antiguas de toda la familia, desde la boda de mis abuelos hasta el nacimiento del último bisnieto, que nació en enero.
Los sábados voy al mercado del barrio temprano.
A esa hora la fruta está más fresca y hay menos gente.
¿A cuánto están las fresas?
A tres euros el kilo.
Son de Huelva y están muy dulces.
Póngame medio kilo, por favor.
¿Algo más?
Sí, un manojo de espárragos y dos limones.
Lo siento, los espárragos se han terminado.
Mañana traeremos más.
En la pescadería compré unas sardinas y le pedí al pescadero que me las limpiara.
Las haremos a la plancha esta noche.
Al salir me encontré con Rosa, una antigua compañera del instituto, y me dio un poco de vergüenza porque no recordaba su apellido.
Hacía años que no la veía.
Ahora trabaja en una panadería cerca de la estación.
Quedamos en tomar un café el martes.
El coche hace un ruido extraño cuando frena.
Lo llevé al taller esta mañana.
El mecánico lo revisó y dijo que las pastillas de freno están gastadas.
Hay que cambiarlas cuanto antes.
¿Cuánto tiempo tardarán?
Unas dos horas, si tenemos las piezas en el almacén.
Mientras esperaba, di un paseo por el polígono.
No había nada interesante, solo naves y camiones.
A las doce me llamaron del taller.
No tenían las piezas.
Las pidieron al proveedor y llegarán mañana.
Me prestaron un coche pequeño mientras tanto.
Era muy viejo y la radio solo sintonizaba una emisora de música folclórica.
Al día siguiente recogí mi coche.
Ya no hace ruido y frena mucho mejor.
La factura fue de ciento ochenta euros, un poco más de lo que esperaba.
El mecánico me explicó que, si hubiera esperado unas semanas más, habría tenido que cambiar también los discos, y eso me habría costado el doble.
El domingo es el cumpleaños de Pablo.
Cumple cuarenta años.
Su mujer está organizando una fiesta sorpresa en su casa.
Nos ha pedido que no digamos nada.
¿Qué le podemos regalar?
Le gusta mucho la fotografía.
Podríamos comprarle un trípode.
El suyo se rompió en las vacaciones.
Vi uno de la marca Fotelix en una tienda del centro.
Es ligero y se pliega fácilmente.
Vale, mañana lo compro yo y luego me pagas la mitad.
¿Y quién hace la tarta?
Su hermana, que es pastelera.
La va a hacer de chocolate y frambuesa, que es su favorita.
Tenemos que llegar a las siete, una hora antes que él.
Pablo cree que va a cenar tranquilamente con su mujer, pero cuando abra la puerta se va a encontrar con treinta amigos cantando.
Nos mudamos el mes que viene a un piso más grande.
Está en el barrio de San Cosme, cerca del río.
Tiene tres dormitorios, dos baños y una terraza enorme.
Lo vimos en marzo y nos enamoramos de él.
El problema es la mudanza.
Tenemos demasiadas cosas.
Este fin de semana vamos a empezar a empaquetar los libros.
Son más de seiscientos.
Algunos los vamos a donar a la biblioteca del barrio.
He pedido presupuesto a tres empresas de mudanzas.
La más barata es Transportes Nublo, pero no tiene muy buenas opiniones en internet y dicen que a veces llegan tarde o rompen algún mueble.
Mi padre dice que podemos usar su furgoneta.
Él mismo nos ayudará con los muebles pesados.
Tiene sesenta y ocho años, pero es más fuerte que nosotros.
El sofá no cabe por la puerta del piso nuevo.
Tendremos que subirlo por el balcón con una grúa o venderlo.
Buenas tardes, ¿tiene algo para la tos?
¿Es tos seca o con flemas?
Seca, sobre todo por la noche.
Le recomiendo este jarabe.
No produce somnolencia.
¿Lo puede tomar un niño?
No, para niños tenemos otro con sabor a fresa.
Es para mí, no se preocupe.
También quería una crema para las quemaduras del sol.
Ayer estuve en la playa de Cala Morena toda la tarde y se me olvidó ponerme protector.
Tiene la espalda muy roja.
Póngase esta crema dos veces al día y evite el sol durante una semana.
¿Cuánto le debo?
Son dieciséis con cincuenta.
¿Necesita una bolsa?
Quería sacar este libro, pero me dice la máquina que tengo una multa.
Déjeme ver su carné.
Sí, devolvió dos novelas con una semana de retraso.
Estuve de viaje y no pude traerlas antes.
No pasa nada, la multa es solo de un euro.
Puede pagarla ahora en el mostrador.
Ya está. ¿Cuánto tiempo me lo puedo llevar?
Tres semanas, y lo puede renovar por internet.
¿Tienen también el segundo tomo?
Lo tiene otro lector ahora mismo.
Si quiere, se lo reservo.
Sí, por favor.
Le llegará un mensaje al móvil cuando esté disponible.
Por cierto, los jueves hay un club de lectura en la sala del primer piso.
Este mes están leyendo una novela policiaca ambientada en un faro de Galicia.
La bibliotecaria me dijo que la autora vendrá a hablar con los lectores a finales de mes y que, si quiero asistir, tengo que apuntarme en la lista de la entrada.
Buenos días, quería abrir una cuenta.
¿Es usted residente en España?
Sí, llegué hace seis meses por trabajo.
Necesito su pasaporte, su número de identidad de extranjero y un contrato de trabajo.
Los he traído todos.
Perfecto. Esta cuenta no tiene comisiones si domicilia la nómina.
¿Me darán una tarjeta?
Sí, la recibirá en su domicilio en unos diez días.
El código secreto llegará en otra carta, por seguridad.
¿Y puedo usar la aplicación del banco en inglés?
Por supuesto, la puede configurar en cinco idiomas.
Firme aquí y aquí, por favor.
Ya está.
Enhorabuena, ya es cliente de nuestro banco.
Si tiene cualquier problema, puede llamarnos o venir a la oficina de lunes a viernes de ocho y media a dos.
Este año hemos plantado un pequeño huerto detrás de la casa.
Mi hijo mayor lo cuida casi todas las tardes.
Tenemos tomates, lechugas, calabacines y un poco de albahaca.
Los tomates tardaron mucho en crecer.
Ahora están rojos y muy sabrosos.
Las lechugas, en cambio, se las comieron los caracoles.
Un vecino nos aconsejó poner cáscaras de huevo alrededor de las plantas.
Dice que a los caracoles no les gusta pasar por encima.
Lo probamos y funcionó.
Los calabacines crecen tan rápido que no sabemos qué hacer con ellos.
Ayer le regalamos seis a la vecina.
Ella nos dio a cambio una receta de crema de calabacín.
Para regar usamos el agua de lluvia que recogemos en un bidón.
En agosto, cuando hace mucho calor, hay que regar dos veces al día.
Nos vamos de vacaciones dos semanas.
Mi suegra vendrá a regarlo mientras estemos fuera.
Cuando volvamos, seguramente tendremos tantos tomates que tendremos que hacer salsa para todo el invierno y regalar el resto a los vecinos y a los compañeros de trabajo.
Hace un mes adoptamos una perra en la protectora.
Se llama Trufa y tiene unos tres años.
Es mezcla de pastor y de no sabemos qué.
Al principio tenía miedo de todo.
Se escondía debajo de la cama cuando oía el aspirador.
Ahora ya confía en nosotros.
La sacamos a pasear tres veces al día.
Por la mañana la saca mi marido antes de ir a trabajar.
Por la tarde la llevo yo al parque.
Allí juega con otros perros del barrio.
Su mejor amigo es un galgo muy tímido que se llama Rayo.
La semana pasada la llevamos al veterinario para ponerle las vacunas.
Pesa doce kilos y está muy sana.
El veterinario nos dijo que come demasiado.
Mis hijos le dan trozos de pan a escondidas.
Ya les he dicho que no lo hagan más.
Nuestro vuelo a Tenerife salía a las seis y diez de la mañana.
Nos levantamos a las tres y media.
El taxi nos recogió a las cuatro.
En el aeropuerto había una cola enorme en el control de seguridad.
A mi mujer le quitaron un bote de champú porque era demasiado grande.
Lo había comprado el día anterior.
Luego anunciaron que el vuelo tenía un retraso de dos horas por la niebla.
Desayunamos en una cafetería carísima.
Dos cafés y dos cruasanes nos costaron catorce euros.
Por fin embarcamos a las ocho y cuarto.
El avión iba lleno.
A mi lado se sentó un hombre que roncaba.
Durmió todo el viaje.
Cuando aterrizamos, nuestra maleta fue la última en salir.
Ya pensábamos que la habían perdido.
A pesar de todo, llegamos al hotel a tiempo para comer y pasamos la tarde en la piscina.
Los nuevos vecinos del quinto llegaron la semana pasada.
Son una pareja joven con un bebé.
Él es de Argentina y ella es de Valencia.
Ayer llamaron a mi puerta para presentarse.
Me trajeron una caja de galletas caseras.
Las había hecho ella con su abuela.
Les ofrecí un café y estuvimos hablando más de una hora.
Él trabaja como ingeniero en una empresa de energía solar.
Ella es traductora y trabaja desde casa.
Me preguntaron por un buen pediatra en el barrio.
Les di el teléfono de la doctora Salcedo.
Es la que atendía a mis hijos cuando eran pequeños.
También les avisé de que el ascensor se estropea a menudo y de que a veces pasa una semana entera sin que nadie venga a repararlo.
No les hizo mucha gracia, con el carrito del bebé y cinco pisos.
Creo que nos vamos a llevar muy bien.
La reunión de los lunes empezó tarde, como siempre.
El director llegó con veinte minutos de retraso.
Se disculpó y dijo que había mucho tráfico.
Primero habló de las ventas del trimestre.
Han subido un ocho por ciento, sobre todo en el norte.
Después presentó el nuevo producto, un termo llamado Zentrovia.
Mantiene el café caliente durante doce horas.
Lo vamos a lanzar en octubre.
Mi compañera Inés preguntó por el presupuesto de publicidad.
Lo han reducido a la mitad.
No le pareció bien y lo dijo claramente.
El director prometió revisarlo con el departamento financiero.
Al final nos pidió ideas para la campaña.
Tenemos que enviárselas antes del jueves.
Yo propondré un vídeo corto en el que un excursionista se bebe un café caliente en la cima de una montaña nevada mientras a su alrededor todo está cubierto de hielo.
Espero que le guste.
El domingo jugó el equipo de mi hija contra el de Robledillo.
Ella es la portera.
Estaba muy preocupada porque el otro equipo no había perdido ningún partido.
El campo estaba lleno de barro por la lluvia.
En la primera parte nos marcaron un gol.
Fue un penalti muy dudoso.
Los padres protestaron, pero el árbitro no cambió de opinión.
En la segunda parte, mi hija paró dos tiros increíbles.
Luego su amiga Noa empató con un cabezazo en el último minuto.
Lo celebraron como si hubieran ganado la liga.
Al terminar, la entrenadora las invitó a todas a un helado.
Mi hija llegó a casa sucísima y muy contenta.
Tuve que lavar las botas dos veces.
Todavía no se han secado.
El próximo partido es en casa, contra el colegio Santa Brígida.
Mi hija dice que si ganan ese partido y el siguiente, podrán jugar la final del torneo provincial en el estadio municipal, delante de cientos de personas.
